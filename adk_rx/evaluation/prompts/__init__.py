"""The judges' and the simulated user's prompts, quoted from google-adk 2.13 (Apache-2.0)."""
