"""Background transfer manager for real networks (adaptive access control of background downloads)."""
