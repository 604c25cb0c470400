"""fastscale's domain core: config, catalog, rules, naming, estimates, terraform runner, AWS checks.

Nothing in this package imports cdktf or jsii, so validation and estimates start instantly.
"""

__version__ = "0.1.0"
