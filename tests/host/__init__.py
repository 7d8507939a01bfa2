"""The reference host's own code (practice/, accounts/, config/): the firm import and the site a newcomer lands on."""
