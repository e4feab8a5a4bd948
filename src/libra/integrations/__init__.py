"""libra inside other agent frameworks (langgraph-bigtool)."""
