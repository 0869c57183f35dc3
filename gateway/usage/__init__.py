"""Token usage normalised across providers, and its cost."""

from gateway.usage.pricing import Cost, Price, price_for, route_price
from gateway.usage.tokens import Usage

__all__ = ["Cost", "Price", "Usage", "price_for", "route_price"]
