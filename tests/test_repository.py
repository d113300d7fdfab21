"""The repository tracks the product only: no built packages or archives, no large files."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE_SUFFIXES = ('.whl', '.egg', '.tar', '.tar.gz', '.tgz', '.tar.bz2', '.tar.xz', '.zip',
                    '.7z', '.rar', '.gz', '.xz', '.bz2', '.jar', '.deb', '.rpm', '.conda')
LIMIT = 1024 * 1024


def tracked_files():
    if shutil.which('git') is None or not (ROOT / '.git').exists():
        pytest.skip('not a git checkout: nothing is tracked to check')
    out = subprocess.run(['git', 'ls-files', '-z'], cwd=ROOT, check=True,
                         capture_output=True).stdout
    return [name for name in out.decode().split('\0') if name]


def test_no_package_or_archive_is_tracked():
    packages = [name for name in tracked_files() if name.lower().endswith(PACKAGE_SUFFIXES)]
    assert packages == [], f'built packages or archives are tracked: {packages}'


def test_no_tracked_file_is_over_one_megabyte():
    large = [(name, (ROOT / name).stat().st_size) for name in tracked_files()
             if (ROOT / name).is_file() and (ROOT / name).stat().st_size > LIMIT]
    assert large == [], f'files over 1 MB are tracked: {large}'


def test_the_check_sees_the_tracked_files():
    # the two tests above pass vacuously on an empty listing
    assert {'pyproject.toml', 'README.md', 'src/dynagrad/__init__.py'} <= set(tracked_files())
