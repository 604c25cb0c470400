"""Contract tests: synthesized Terraform JSON against the real provider schemas."""
