"""The node side of fastscale's resource layer, as the jsii package the engine's kernel loads
(`fastscale-elements-<version>.tgz`, built from node/elements by `make engine-elements`)."""
