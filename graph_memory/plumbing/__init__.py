"""What every wing shares: the model-call log, the advisory-lock registry, dates and names for people,
and what a deleted record leaves in admin's log."""
