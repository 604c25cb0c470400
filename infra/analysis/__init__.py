"""Answers computed from a config without AWS: cold-start and cost estimates, the spike simulator and
``recommend``'s search for the cheapest settings that meet a latency SLO."""
