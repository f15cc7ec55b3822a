# pdpkit — two commands set everything up on a fresh machine:
#   make book   create .venv, install, build the HTML book into _build/html/
#   make test   create .venv, install, run unit tests, nbval on every chapter,
#               and a book build with warnings as errors
#   make test-portable   nbval again as machines with other BLAS and SIMD kernels
# and one to run the chapters yourself:
#   make lab    install JupyterLab into .venv and serve chapters/ on 127.0.0.1
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.pdpkit-installed
BROWSER_STAMP := $(VENV)/.pdpkit-browser-installed
LAB_STAMP := $(VENV)/.pdpkit-lab-installed
# The project's Jupyter kernel: the chapters' metadata name it, so they run on .venv's
# Python wherever they are opened (a Jupyter that lacks it asks for a kernel instead of
# silently using another environment's python3).
KERNEL := pdpkit
KERNEL_DISPLAY := Python (pdpkit)
KERNEL_SPEC := $(VENV)/share/jupyter/kernels/$(KERNEL)/kernel.json
LAB_PORT ?= 8888
export PYTHONHASHSEED := 0
# No progress bars in tests, nbval or the book build: stored outputs must not contain one.
export PDPKIT_PROGRESS := 0
# Python's bytecode cache stays on (an environment may switch it off with
# PYTHONDONTWRITEBYTECODE): every process the tests start (two xdist workers, a kernel per
# chapter, each command-line run) then reads pdpkit and the tests' rewritten asserts
# compiled, instead of compiling them again. The caches are the git-ignored __pycache__/.
unexport PYTHONDONTWRITEBYTECODE
# Keep BLAS single-threaded: reproducible outputs and no oversubscription on 2 cores.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: help install book test test-portable unit nbval book-strict bench bench-scale browser-test \
	reproduce lab lock clean pdf

help:
	@echo "make book | make test | make test-portable | make lab | make bench | make bench-scale |"
	@echo "make browser-test | make pdf | make reproduce [CHAPTERS=...] | make lock | make clean"

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test,book,dask]"
	touch $(STAMP)

# Registered inside .venv (--sys-prefix): every Jupyter run from .venv sees it, and no
# other environment's Jupyter is changed.
$(KERNEL_SPEC): $(STAMP)
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) \
	  --display-name "$(KERNEL_DISPLAY)" > /dev/null

install: $(STAMP) $(KERNEL_SPEC)

book: install
	$(BIN)/jupyter-book build . --keep-going
	@echo "Book: _build/html/index.html"

# Two workers: the machines have two cores (pytest-xdist). Unit tests are spread one by
# one; each notebook's cells stay together on one worker (one kernel per chapter). The unit
# tests do not load the notebook plugin (nbval imports nbformat and its JSON-schema stack:
# about 3 s in every process).
unit: install
	$(BIN)/python -m pytest tests -q -n 2 -p no:nbval

nbval: install
	$(BIN)/python -m pytest --nbval --nbval-current-env chapters/ -q -p no:cacheprovider -n 2 --dist loadscope

# The strict build renders the outputs stored in the notebooks instead of executing them
# again: `make nbval` has just proved that they equal a fresh execution against the
# installed package. (`make book` executes every chapter.)
STORED_CONFIG := _build/_config_stored_outputs.yml
book-strict: install
	mkdir -p _build
	sed -e 's/^  execute_notebooks: force$$/  execute_notebooks: "off"/' \
	  -e 's#^    \(pdpkit_[a-z_]*\): _ext$$#    \1: ../_ext#' _config.yml > $(STORED_CONFIG)
	grep -q '^  execute_notebooks: "off"$$' $(STORED_CONFIG)
	$(BIN)/jupyter-book build . --config $(STORED_CONFIG) --all -W -n --keep-going

# nbval (two workers) and the strict build (one process, the stored outputs) run side by side:
# neither writes what the other reads; each one's output is printed whole when it ends.
test: install
	$(MAKE) unit
	$(MAKE) --no-print-directory -j2 --output-sync=target nbval book-strict

# The stored outputs must be a fresh execution on any x86-64 machine, not only on the
# one that wrote them: a printed digit must not depend on the last bit of a BLAS, libm or
# numpy SIMD result. `make nbval` runs this machine's own kernels; `make test-portable`
# runs nbval again as two other machines would: OpenBLAS's Prescott kernels (SSE3) with
# numpy's SIMD loops at the x86-64-v2 baseline, then OpenBLAS's Haswell kernels (AVX2,
# FMA) with numpy's loops at x86-64-v3 (skipped on a CPU without AVX2 and FMA).
NPY_SIMD_V2 := X86_V3 X86_V4 AVX512_ICL AVX512_SPR
NPY_SIMD_V3 := X86_V4 AVX512_ICL AVX512_SPR
SHOW_KERNELS := $(BIN)/python -c 'import threadpoolctl as t; \
  from numpy._core import _multiarray_umath as m; \
  blas = sorted({i.get("architecture") for i in t.threadpool_info() if i["internal_api"] == "openblas"}); \
  simd = [k for k in m.__cpu_dispatch__ if m.__cpu_features__[k]] or ["baseline only"]; \
  print("OpenBLAS kernels:", ", ".join(blas), "| numpy SIMD:", ", ".join(simd))'

test-portable: $(STAMP)
	@echo "== nbval with OPENBLAS_CORETYPE=Prescott, numpy SIMD at x86-64-v2"
	@export OPENBLAS_CORETYPE=Prescott NPY_DISABLE_CPU_FEATURES="$(NPY_SIMD_V2)"; \
	  $(SHOW_KERNELS) && $(MAKE) --no-print-directory nbval
	@if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then \
	  echo "== nbval with OPENBLAS_CORETYPE=Haswell, numpy SIMD at x86-64-v3"; \
	  export OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="$(NPY_SIMD_V3)"; \
	  $(SHOW_KERNELS) && $(MAKE) --no-print-directory nbval; \
	else echo "== skipped OpenBLAS Haswell: this CPU has no AVX2/FMA"; fi

# diffprivlib 0.6.6 does not import with scikit-learn >= 1.8: the benchmark runs it in its own
# environment, pinned by benchmarks/constraints-diffprivlib.txt.
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.pdpkit-bench-installed
$(BENCH_STAMP): benchmarks/constraints-diffprivlib.txt
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet -c benchmarks/constraints-diffprivlib.txt diffprivlib scikit-learn opendp statsmodels
	touch $(BENCH_STAMP)

bench: $(STAMP) $(BENCH_STAMP)
	$(BIN)/python benchmarks/run_all.py

# Fit and report at 10^6 and 10^7 rows (numpy, memmap) and on a Dask LocalCluster: minutes.
bench-scale: $(STAMP)
	$(BIN)/python benchmarks/bench_scale.py --full

$(BROWSER_STAMP): $(STAMP)
	@command -v chromium > /dev/null || { \
	  echo "Installing Debian's chromium (needs apt)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null; }
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[browser]" > /dev/null || \
	  $(BIN)/python -m pip install --quiet -c constraints.txt playwright
	touch $(BROWSER_STAMP)

# The chapters' experiments at the sources' scale (hours, not minutes); results go to
# results/<chapter>/ with their provenance. CHAPTERS="amp single_parameter" runs only those.
reproduce: $(STAMP)
	$(BIN)/python reproduce/run.py $(CHAPTERS)

browser-test: $(BROWSER_STAMP)
	test -f _build/html/index.html || $(MAKE) book
	$(BIN)/python tests/browser/check_book.py _build/html
	PDPKIT_BROWSER_TESTS=1 $(BIN)/python -m pytest tests/browser -q -s -p no:cacheprovider

# The whole book as one PDF, _build/pdf/pdpkit.pdf (minutes; not part of make test). Headless
# Chromium prints a single-page build of the book (Sphinx's singlehtml, from the outputs stored
# in the notebooks): the same HTML, CSS and MathJax as the web book, every cross-reference an
# anchor of that page and so a link inside the PDF, offline, with the Chromium that make
# browser-test uses. Sphinx's LaTeX builder would need TeX (hundreds of MB from Debian) and
# could not render the notebooks' HTML outputs (tables, the privacy page). The next HTML build
# copies the PDF and links it from the landing page.
pdf: $(STAMP) $(BROWSER_STAMP)
	$(BIN)/python tools/build_pdf.py

$(LAB_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[lab]"
	touch $(LAB_STAMP)

# JupyterLab on chapters/ for a reader who runs the chapters: the kernel is the project's
# (also for new notebooks),
# BLAS stays single-threaded as in the tests (the same outputs), and PDPKIT_PROGRESS is
# unset so long runs show their progress bars. LAB_PORT=... picks another port.
lab: $(LAB_STAMP) $(KERNEL_SPEC)
	@token=$$($(BIN)/python -c 'import secrets; print(secrets.token_hex(24))'); \
	echo "JupyterLab on chapters/, kernel \"$(KERNEL_DISPLAY)\" ($(KERNEL)); Ctrl-C stops it."; \
	echo "Open http://127.0.0.1:$(LAB_PORT)/lab?token=$$token"; \
	root=$$([ "$$(id -u)" = 0 ] && echo --allow-root || true); \
	exec env -u PDPKIT_PROGRESS $(BIN)/jupyter lab --no-browser --ServerApp.ip=127.0.0.1 \
	  --ServerApp.port=$(LAB_PORT) --ServerApp.port_retries=0 \
	  --IdentityProvider.token=$$token --ServerApp.root_dir=chapters \
	  --MappingKernelManager.default_kernel_name=$(KERNEL) $$root

# Regenerate the constraints file from the current environment.
lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^pdpkit' > constraints.txt

clean:
	rm -rf _build $(BENCH_VENV)
