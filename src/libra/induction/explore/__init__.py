"""The exploration engine (Algorithm 1): waves of calls over the sandbox, each success offering its values to the
tools that might take them, counterfactual controls deciding which offers were relations."""
