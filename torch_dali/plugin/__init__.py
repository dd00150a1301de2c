"""Framework plugins (`torch_dali.plugin.pytorch`)."""
