"""Three unrelated services, each a module of its own with its own fixtures, built one by one and together.

Why: a project file often names several servers or modules that have nothing to do with each other, and a build
of them together must find what the builds of each find alone. Together, every value of every service is a
candidate for every other service's inputs of its type (a bakery's order numbers for a course's id, a garage's
plates for a product code): those offers seldom succeed, and the exploration must not spend on them the calls,
the gates and the fills a service's own values need. ``tests/test_joint_build.py`` builds the three with
:class:`libra.sources.python.PythonSource`, one spec each and all three specs at once, and compares.

Each module is written the way its author would write it alone: module functions over module globals or a class,
type hints, docstrings, validation that raises. Each declares ``FIXTURES`` (what its README tells a user) and
``DESIGNED`` relations in the shape of :mod:`tests.generalization` (tool names as a build of the module names them).
"""

#: The services, by module name under this package.
MODULES = ("bakery", "garage", "courses")
