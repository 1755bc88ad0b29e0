# nemoperf - benchmark NeMo LLM pre-training on Slurm: launch, parse, compare.
# Targets: all check lint demo bench fuzz sanitize mutate install uninstall clean deps
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/nemoperf
MANDIR  ?= $(PREFIX)/share/man
# bash-completion loads completions/<command> on demand from $XDG_DATA_DIRS (/usr/local/share, /usr/share)
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR ?=

CC      ?= cc
PKGS    := libcurl libpcre2-8 jansson
# cairo draws nemoperf-parse --plot: only parse (and the tests) link it, so the job-side tools
# (nemoperf-synth runs inside the 24.11/26.05 chroot clusters) need no graphics libraries.
PKGS_DRAW := cairo fontconfig
# the results store (nemoperf-parse --store/--history/--compare, nemoperf-launch --wait --store): only the
# tools that store link SQLite and libpq, so nemoperf-synth (run inside the chroot clusters) needs neither.
PKGS_STORE := sqlite3 libpq
WARN    := -std=c11 -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wwrite-strings
CFLAGS  ?= -O2 -g
# Build directory; `make sanitize` uses its own so both builds coexist.
B       ?= build
BIN     ?= bin
XCFLAGS ?=
XLDFLAGS ?=

# Evaluated lazily: `make check` installs pkg-config packages before it uses them.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) $(PKGS_DRAW) $(PKGS_STORE) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
DRAW_LIBS  = $(shell pkg-config --libs $(PKGS_DRAW) 2>/dev/null)
STORE_LIBS = $(shell pkg-config --libs $(PKGS_STORE) 2>/dev/null)
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)

ALL_CFLAGS = $(WARN) $(CFLAGS) $(XCFLAGS) -D_GNU_SOURCE -Iinclude \
             -DNP_DATADIR='"$(DATADIR)"' $(PKG_CFLAGS) -MMD -MP
# cairo, fontconfig, libpq and libcurl are opened on first use (src/util/dynlib.c): the tools link none of them,
# only their headers are needed to build; the tests call them directly and link them.
LAZY_LIBS  = $(shell pkg-config --libs libcurl 2>/dev/null) $(DRAW_LIBS) $(shell pkg-config --libs libpq 2>/dev/null)
LDLIBS_ALL = $(filter-out $(LAZY_LIBS),$(PKG_LIBS)) -lm -lpthread -ldl
TOOL_LIBS  =
$(BIN)/nemoperf-parse: TOOL_LIBS = $(filter-out $(LAZY_LIBS),$(STORE_LIBS))
$(BIN)/nemoperf-launch: TOOL_LIBS = $(filter-out $(LAZY_LIBS),$(STORE_LIBS))

LIB_SRC  := $(filter-out src/cmd/%,$(wildcard src/*/*.c))
CMD_SRC  := $(wildcard src/cmd/*.c)
TEST_SRC := $(wildcard tests/check_*.c)
LIB_OBJ  := $(LIB_SRC:src/%.c=$(B)/obj/%.o)
LIB      := $(B)/libnemoperf.a
TOOLS    := $(CMD_SRC:src/cmd/%.c=$(BIN)/nemoperf-%)
TESTS    := $(TEST_SRC:tests/check_%.c=$(B)/tests/check_%)

.PHONY: all check lint unit integration demo bench fuzz sanitize mutate install uninstall clean deps tests
.DELETE_ON_ERROR:

all: $(TOOLS)

$(B)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/cmd/%.o: src/cmd/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BIN)/nemoperf-%: $(B)/cmd/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $^ $(TOOL_LIBS) $(LDLIBS_ALL)

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

# tests/testutil.c: fixtures every suite may share (kept: not an intermediate file make removes)
.SECONDARY: $(B)/tests/testutil.o
$(B)/tests/check_%: $(B)/tests/check_%.o $(B)/tests/testutil.o $(LIB)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $^ $(CHECK_LIBS) $(DRAW_LIBS) $(STORE_LIBS) $(PKG_LIBS) $(LDLIBS_ALL)

tests: $(TESTS) $(TOOLS)

# Installs missing build/test dependencies with apt-get (Debian); no-op when present.
deps:
	@sh build-aux/deps.sh check

# The test command users and CI run.
check: deps
	@$(MAKE) --no-print-directory tests
	@$(MAKE) --no-print-directory unit integration

# The tree's shape: dependencies point one way between src/ areas, no include cycle between modules
# (build-aux/layers.py; docs/architecture.md).  `make check` runs it too (tests/run-unit.sh).
lint:
	@python3 build-aux/layers.py

unit: tests
	@sh tests/run-unit.sh $(B)/tests

integration: tests
	@sh tests/run-integration.sh

sanitize:
	@sh build-aux/deps.sh check
	@$(MAKE) --no-print-directory B=build-san BIN=build-san/bin \
	    XCFLAGS='-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined' \
	    tests
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 NP_BIN=build-san/bin \
	    sh tests/run-unit.sh build-san/tests
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 NP_BIN=build-san/bin NP_TESTS=build-san/tests \
	    sh tests/run-integration.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@sh build-aux/demo.sh

bench: deps
	@sh build-aux/deps.sh bench
	@$(MAKE) --no-print-directory all
	@sh bench/run.sh
	@sh bench/submit.sh
	@sh bench/store.sh

# The verdict paths' mutation score (build-aux/mutate.py, tests/mutants/*.tsv; docs/testing.md): each mutant
# built in a copy of the tree under $TMPDIR and run against the fast tests that cover it. Not part of `make check`
# (which only checks the mutants still match the code). MUTATE_SAMPLE=N N of them (each module its share),
# MUTATE_MODULES=a,b every mutant of those modules.
mutate: deps
	@python3 build-aux/mutate.py

fuzz:
	@sh build-aux/deps.sh fuzz
	@$(MAKE) --no-print-directory all
	@sh fuzz/run.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/recipes $(DESTDIR)$(DATADIR)/reference \
	    $(DESTDIR)$(DATADIR)/driver $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	install -m 644 recipes/*.json $(DESTDIR)$(DATADIR)/recipes/
	install -m 644 share/nemoperf/reference/*.tsv $(DESTDIR)$(DATADIR)/reference/
	install -d $(DESTDIR)$(DATADIR)/reference/megatron-bridge $(DESTDIR)$(DATADIR)/megatron-bridge
	install -m 644 share/nemoperf/reference/megatron-bridge/*.tsv $(DESTDIR)$(DATADIR)/reference/megatron-bridge/
	install -m 644 share/nemoperf/megatron-bridge/*.tsv share/nemoperf/megatron-bridge/*.json \
	    $(DESTDIR)$(DATADIR)/megatron-bridge/
	install -m 644 share/nemoperf/driver/*.py $(DESTDIR)$(DATADIR)/driver/
	install -d $(DESTDIR)$(DATADIR)/schema
	install -m 644 share/nemoperf/schema/*.json $(DESTDIR)$(DATADIR)/schema/
	install -d $(DESTDIR)$(DATADIR)/fabric
	install -m 644 share/nemoperf/fabric/fabric.tsv $(DESTDIR)$(DATADIR)/fabric/
	install -d $(DESTDIR)$(DATADIR)/packs
	install -m 644 share/nemoperf/packs/*.tsv $(DESTDIR)$(DATADIR)/packs/
	install -d $(DESTDIR)$(DATADIR)/dfm/conf
	install -m 644 share/nemoperf/dfm/conf/*.yaml $(DESTDIR)$(DATADIR)/dfm/conf/
	install -m 644 share/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	for t in launch parse setup; do \
	    install -m 644 share/bash-completion/completions/nemoperf $(DESTDIR)$(BASHCOMPDIR)/nemoperf-$$t || exit 1; \
	done

uninstall:
	rm -f $(TOOLS:$(BIN)/%=$(DESTDIR)$(BINDIR)/%)
	rm -rf $(DESTDIR)$(DATADIR)
	for m in share/man/man1/*.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$${m##*/}; done
	rm -f $(DESTDIR)$(BASHCOMPDIR)/nemoperf-launch $(DESTDIR)$(BASHCOMPDIR)/nemoperf-parse \
	    $(DESTDIR)$(BASHCOMPDIR)/nemoperf-setup

clean:
	rm -rf build build-san bin

-include $(wildcard $(B)/obj/*/*.d $(B)/cmd/*.d $(B)/tests/*.d)
