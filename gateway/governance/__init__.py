"""Limits a platform team sets on tenants and keys: rate limits (more to come: budgets, managed keys)."""
