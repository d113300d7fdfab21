"""Print pip constraints that pin every dependency pyproject.toml declares to its lower bound.

`.ci/compat floor` installs the project with these constraints in a fresh virtual
environment, so that each `>=` in pyproject.toml is a tested promise. A package named in
several extras must have one lower bound. Extras listed in UNTESTABLE are left out, with
the reason.
"""
import re
import sys
import tomllib
from pathlib import Path

# extra -> why the floor environment cannot install it
UNTESTABLE = {'cuda': 'CuPy needs an NVIDIA GPU and its driver'}

REQUIREMENT = re.compile(r'^\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*(.*)$')


def floors(project):
    pins = {}
    groups = {'dependencies': project.get('dependencies', [])}
    groups.update({extra: reqs for extra, reqs in project.get('optional-dependencies', {}).items()
                   if extra not in UNTESTABLE})
    for group, reqs in groups.items():
        for req in reqs:
            name, spec = REQUIREMENT.match(req).groups()
            name = re.sub(r'[-_.]+', '-', name).lower()
            bound = re.search(r'(==|>=)\s*([^,;\s]+)', spec)
            if bound is None:
                sys.exit(f'{req!r} (in {group}) has no lower bound: give it one')
            if pins.setdefault(name, bound.group(2)) != bound.group(2):
                sys.exit(f'{name} has two lower bounds in pyproject.toml: '
                         f'{pins[name]} and {bound.group(2)} (in {group}); keep one')
    return pins


def main():
    project = tomllib.loads((Path(__file__).resolve().parents[1] / 'pyproject.toml')
                            .read_text())['project']
    python = re.search(r'>=\s*([\d.]+)', project['requires-python']).group(1)
    running = '.'.join(map(str, sys.version_info[:2]))
    if running != python:
        print(f'# note: the declared floor is Python {python}; this is Python {running}',
              file=sys.stderr)
    for extra, why in UNTESTABLE.items():
        print(f'# extra {extra!r} left out: {why}', file=sys.stderr)
    for name, version in sorted(floors(project).items()):
        print(f'{name}=={version}')


if __name__ == '__main__':
    main()
