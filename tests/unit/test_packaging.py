"""pyproject.toml lists every package of compiler/ (as tinyfuse.*) and every folder of the package data
(codegen_templates/, runtime_c/): a folder left out is dropped from the wheel or warned about."""
import tomllib

from tests.conftest import ROOT


def test_every_package_and_data_folder_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    code = {"tinyfuse" + "".join("." + part for part in p.parent.relative_to(ROOT / "compiler").parts)
            for p in (ROOT / "compiler").rglob("__init__.py")}
    data = {"tinyfuse." + ".".join(p.relative_to(ROOT).parts) for base in ("codegen_templates", "runtime_c")
            for p in [ROOT / base, *(ROOT / base).rglob("*")] if p.is_dir() and "__pycache__" not in p.parts}
    assert listed == code | data
