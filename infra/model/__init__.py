"""What a validated config resolves to: resource names, capacity and instance fit, cut-over, deployment and
update settings, detection (metrics) settings, where Terraform state lives, and resource overrides."""
