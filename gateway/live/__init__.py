"""Live configuration: tenants, policy, models and prices changed while serving (admin API, SIGHUP, a file
watch), shared by every replica through the state store (docs/deployment.md, "Live configuration")."""
