"""Small helpers with no knowledge of tools: atomic files, the cache folder, interrupts, lazy exports, the words of
identifiers and sentences."""
