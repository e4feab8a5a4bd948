"""The exploration engine (Algorithm 1): waves of calls over the sandbox, each success offering its values to the
tools that might take them, counterfactual controls deciding which offers were relations.

Reading order: :mod:`.engine` (the wave and its phases), :mod:`.state` (what the engine holds), then one module
per phase -- :mod:`.schedule` and :mod:`.binding` (select the wave), :mod:`.calls` (run it), :mod:`.planning`,
:mod:`.values`, :mod:`.offers` and :mod:`.controls` (what a success asks for), :mod:`.judging` (run the tests,
keep the relations), :mod:`.retrying` and :mod:`.retries` (retries on books of their own), :mod:`.checkpoint`.
The rules that follow from the catalog alone are in :mod:`.inputs` and :mod:`.fits`; the records passed between
phases in :mod:`.types`; the packed worklist in :mod:`.worklist`.
"""
