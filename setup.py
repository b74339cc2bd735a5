"""What pyproject.toml cannot say: the repository's `data/` folder ships inside the package.

`data/` stays where it is in a checkout; a built wheel (and so a non-editable
`pip install .`) carries it as `labkit/data`, where `labkit.core.paths` finds it.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["labkit", "labkit.*"]), "labkit.data"],
    package_dir={"labkit.data": "data"},
    package_data={
        "labkit": ["py.typed", "views/*.js", "views/*.css"],
        "labkit.data": ["**/*"],
    },
    exclude_package_data={"labkit.data": ["**/__pycache__/*", "**/*.pyc"]},
)
