"""HTTP surface: proxy endpoints, health, metrics and admin."""
