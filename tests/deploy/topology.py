"""The compose stack's replicas, as docker-compose.yml, deploy/nginx.conf and deploy/prometheus.yml name them.

Adding a replica to the stack means adding its name here too (docs/deployment.md, "Scaling replicas").
"""

REPLICAS = ["gateway-1", "gateway-2"]
