"""Facts and boundaries every layer above may use: the instance catalog, AWS facts, regions, limits, artifact
references, provider versions, and the only ways fastscale reads and writes files, reaches a host or runs a
process."""
