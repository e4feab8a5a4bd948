"""Small helpers with no knowledge of tools: atomic files, the cache folder, interrupts, lazy exports."""
