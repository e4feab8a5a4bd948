"""Values a build can try for a parameter, drawn in layers: what the sandbox showed, what the documentation states,
realistic values for what the name says, values built from the type or schema, and repairs after a refusal."""
