"""`cachegate demo`: realistic agent traffic through a gateway, then what it saved and stopped."""
