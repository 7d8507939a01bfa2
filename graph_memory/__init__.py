"""Graph Memory Layer: a walled, compounding memory for a law firm's assistant."""
