"""What a validated config resolves to: `resolved` (the whole stack, immutable, every name, tag, default, pool,
scaling, routing, override and adopted name decided once by `resolve`), and the helpers it is built from:
resource names, capacity and instance fit, cut-over, deployment and update settings, detection (metrics)
settings, where Terraform state lives, and resource overrides."""
