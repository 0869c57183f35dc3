"""The built-in live dashboard (/dashboard) for deployments without Grafana."""
