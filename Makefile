# Gateway API policy attachment webhook. `make help` lists the targets.

GO       ?= go
# Gateway API v1.7.0 needs Go 1.27; a machine with an older Go fetches this toolchain from the
# Go module proxy (about 10 s, once). hack/lib/toolchain.sh names the same one for the scripts.
export GOTOOLCHAIN ?= go1.27.3
BIN      := bin/webhook
PKGS     := ./...
EXAMPLES := examples
# The version the binary reports (`webhook version`, the serve log, the image's label).
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/webhook
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/webhook

.PHONY: plugin
plugin: ## Build bin/kubectl-policy_attachment: the same binary as the kubectl plugin `kubectl policy-attachment` (put it on your PATH)
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/kubectl-policy_attachment ./cmd/webhook

.PHONY: run
run: ## Start a local control plane + the webhook, apply examples/, keep serving (Ctrl-C stops); CLUSTER=current uses $KUBECONFIG's cluster
ifeq ($(CLUSTER),current)
	$(GO) run ./hack/control-plane/localcluster -current -f $(EXAMPLES)
else
	@assets=$$(bash hack/control-plane/control-plane.sh) && KUBEBUILDER_ASSETS=$$assets $(GO) run ./hack/control-plane/localcluster -f $(EXAMPLES)
endif

.PHONY: check-examples
check-examples: build ## Judge the policies in examples/ offline (webhook check); denials there are expected
	@./$(BIN) check -f $(EXAMPLES); code=$$?; \
	if [ $$code -gt 1 ]; then exit $$code; fi; \
	echo "(exit code $$code: 0 all allowed, 1 some denied, 2 unusable input)"

.PHONY: explain
explain: build ## Print the effective policies and impact statuses of examples/ (webhook explain)
	./$(BIN) explain -f $(EXAMPLES)

# Debian's chromium, installed with apt-get when missing (about 110 MB; 4 s to download here).
CHROMIUM := command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

.PHONY: html-check
html-check: ## Render explain -o html of examples/ and of a generated 60-route cluster in headless Chromium (installed when missing): its DOM, what selecting a policy or a path highlights, no request to the network, screenshots
	@$(CHROMIUM) && REQUIRE_CHROMIUM=1 $(GO) test -count=1 ./test/html

.PHONY: pictures
pictures: ## Take the docs' screenshots of explain -o html (docs/images/*.png, shown in docs/pictures.md) in headless Chromium (installed when missing)
	@$(CHROMIUM) && UPDATE_GOLDEN=1 REQUIRE_CHROMIUM=1 $(GO) test -count=1 -run 'TestExplainPageInChromium|TestPictureScreenshots' ./test/html

.PHONY: control-plane
control-plane: ## Build kube-apiserver + etcd from source once per machine (cached outside the checkout)
	@bash hack/control-plane/control-plane.sh >/dev/null

.PHONY: test
test: ## Run every test: unit, CLI, and integration against a real kube-apiserver + etcd
	@assets=$$(bash hack/control-plane/control-plane.sh) && KUBEBUILDER_ASSETS=$$assets $(GO) test -count=1 $(PKGS)

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane
	$(GO) test -count=1 ./cmd/... ./pkg/...

.PHONY: update-golden
update-golden: ## Rewrite golden files (testdata/**/want.json, check.json) and the README example
	UPDATE_GOLDEN=1 $(GO) test -count=1 ./cmd/... ./pkg/...

.PHONY: bench
bench: ## Run the benchmarks (ns/op, B/op, allocs/op): engine, impact, reviews through the handler
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

.PHONY: load
load: build ## Load harness: webhook serve on the issue's snapshot, driven over TLS from a second process (about 30 s)
	$(GO) run ./hack/bench/load -webhook $(BIN)

.PHONY: compare
compare: ## Create latency through the API server: no webhook vs a ValidatingAdmissionPolicy vs this webhook
	@assets=$$(bash hack/control-plane/control-plane.sh) && KUBEBUILDER_ASSETS=$$assets $(GO) run ./hack/bench/compare && \
	KUBEBUILDER_ASSETS=$$assets $(GO) run ./hack/bench/compare -no-live-reads | tail -3

FUZZTIME ?= 30s

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 30s); failing inputs land in testdata/fuzz as regression cases
	@FUZZTIME=$(FUZZTIME) GO=$(GO) bash hack/fuzz.sh

.PHONY: fmt
fmt: ## Format the code
	gofmt -w cmd pkg internal test hack certs

.PHONY: vet
vet: ## go vet
	$(GO) vet -tags e2e $(PKGS)

.PHONY: lint
lint: vet ## gofmt check and go vet
	@out=$$(gofmt -l cmd pkg internal test hack certs); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: verify
verify: lint ## lint, and go mod tidy leaves no diff
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

# The documentation site's tools, from Debian's packages, pinned.
DOCS_PACKAGES := mkdocs=1.4.2+dfsg-2 mkdocs-material=8.2.5-1 linkchecker=10.2.1-1

.PHONY: docs
docs: ## Build the documentation site into .local/site (MkDocs + Material, installed from Debian's packages if missing) and check its links and anchors
	@dpkg-query -W -f='$${Version}\n' mkdocs mkdocs-material linkchecker 2>/dev/null | tr '\n' ' ' | grep -qx '1.4.2+dfsg-2 8.2.5-1 10.2.1-1 ' || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(DOCS_PACKAGES) >/dev/null; }
	@# linkchecker, run as root, reads the site as user nobody: every folder above it must let
	@# others through. make run keeps its kubeconfig in .local/kube (private) and leaves .local
	@# open; a .local an older make run made private gets the search bit back (x, not r: the
	@# kubeconfig itself stays 0600).
	@mkdir -p .local && chmod go+x .local
	PYTHONWARNINGS=ignore mkdocs build --quiet --strict --clean
	linkchecker -f hack/docs/linkcheckerrc --no-status --quiet .local/site/index.html

.PHONY: kinds-table
kinds-table: build ## Print the table of built-in kinds (docs/kinds.md), from the kind table
	@./$(BIN) kinds

.PHONY: kinds-drift
kinds-drift: ## Print where each built-in row contradicts its implementation's CRD (served modules at Gateway API v1.7.0 and v1.6.3, the others through testdata/kindfacts), and fail on drift or a policy-labelled CRD without a row not listed with why (EG_VERSION=, GATEWAY_API_VERSION=, ISTIO_API_VERSION= pick other module versions; a comma-separated list checks each)
	$(GO) run ./hack/facts/kinds-drift $(if $(GATEWAY_API_VERSION),-gateway-api $(GATEWAY_API_VERSION)) $(if $(EG_VERSION),-envoy-gateway $(EG_VERSION)) $(if $(ISTIO_API_VERSION),-istio $(ISTIO_API_VERSION))

.PHONY: kind-facts
kind-facts: ## Re-read testdata/kindfacts, the facts of the CRDs no Go module serves, from git clones under KINDFACTS_MIRROR= (AT=name=ref reads a source at another release and records it; ONLY=name,... reads some)
	$(GO) run ./hack/facts/kind-facts $(if $(KINDFACTS_MIRROR),-mirror $(KINDFACTS_MIRROR)) $(if $(AT),-at $(AT)) $(if $(ONLY),-only $(ONLY))

.PHONY: conformance-corpus
conformance-corpus: ## Regenerate testdata/conformance/expectations.yaml: the route attachment facts of Gateway API's conformance tests at go.mod's version (test/conformance checks the webhook's attachment against them)
	$(GO) run ./hack/facts/conformance-corpus

SEED ?= 1
N    ?= 1000

.PHONY: oracle
oracle: ## Judge N (1000) generated scenarios (SEED=) by the webhook and by Envoy Gateway's own translator, print where they disagree, examples in bin/oracle (egctl is built once from its module, cached outside the checkout: about 30 minutes cold)
	@egctl=$$(bash hack/oracles/egctl.sh) && $(GO) run ./hack/oracles/oracle -egctl $$egctl -version $$(basename $$(dirname $$egctl) -meta) -seed $(SEED) -n $(N) -examples bin/oracle

.PHONY: oracle-ci
oracle-ci: ## The oracle as CI runs it: seed 1, 100 scenarios (about a minute warm); fails on any verdict that differs (not by design) or on status agreement below 99 %
	@egctl=$$(bash hack/oracles/egctl.sh) && $(GO) run ./hack/oracles/oracle -egctl $$egctl -version $$(basename $$(dirname $$egctl) -meta) -seed 1 -n 100 \
		-max-false-denials 0 -min-verdict-agreement 1 -min-status-agreement 0.99

KAN_N ?= 30

.PHONY: oracle-kan
oracle-kan: ## kube-agentic-networking's own controller against our XAccessPolicy verdicts on KAN_N (30) generated scenarios, on a local control plane (the controller is built once from its module, cached outside the checkout)
	@assets=$$(bash hack/control-plane/control-plane.sh) && ctl=$$(bash hack/oracles/kan.sh) && KUBEBUILDER_ASSETS=$$assets $(GO) run ./hack/oracles/oracle-kan -controller $$ctl -n $(KAN_N)

.PHONY: e2e
e2e: build ## The e2e suite on a local control plane, the webhook binary as a process, configs from deploy/base
	@assets=$$(bash hack/control-plane/control-plane.sh) && KUBEBUILDER_ASSETS=$$assets $(GO) run ./hack/control-plane/e2e -webhook $(BIN)

.PHONY: e2e-node
e2e-node: ## The e2e suite against the webhook deployed as users deploy it, on a real one-node cluster on this machine (root; about 30 s warm)
	bash hack/realnode/e2e.sh

.PHONY: e2e-kind
e2e-kind: ## The e2e suite on a kind cluster with cert-manager and the webhook installed; Docker, kind and the node image built here, no registry (root; OVERLAY=plain-certs, KEEP_CLUSTER=1; docs/kind.md)
	bash hack/kind/e2e.sh

.PHONY: certs
certs: ## Make a CA and serving certificate for the plain-certs overlay (deploy/overlays/plain-certs/out)
	$(GO) run ./certs

IMAGE ?= policyattachment/webhook:latest

.PHONY: image
image: ## Build the container image (needs a Docker engine; none runs on our CI machines)
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

.PHONY: image-tar
image-tar: ## Write the same image as bin/webhook-image.tar with no Docker engine (ctr images import, docker load, kind load image-archive)
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o bin/webhook-linux-amd64 ./cmd/webhook
	$(GO) run ./hack/release/imagetar -binary bin/webhook-linux-amd64 -image $(IMAGE) -version $(VERSION) -o bin/webhook-image.tar
	@echo "wrote bin/webhook-image.tar ($(IMAGE), version $(VERSION))"

.PHONY: release
release: ## Write dist/ for VERSION=vX.Y.Z: the image for linux/amd64 and arm64 (one OCI index), the packaged chart and index.yaml, a CycloneDX SBOM, SHA256SUMS (docs/releasing.md)
	$(GO) run ./hack/release -version $(VERSION) -o dist

.PHONY: release-verify
release-verify: ## Check the release in dist/ (VERSION=vX.Y.Z): checksums, both platforms' binaries, the chart, the SBOM
	$(GO) run ./hack/release verify -version $(VERSION) -dir dist

.PHONY: deploy
deploy: ## Install into the current cluster: OVERLAY=cert-manager (default) or plain-certs
	kubectl apply -k deploy/overlays/$(or $(OVERLAY),cert-manager)

.PHONY: undeploy
undeploy: ## Remove the webhook configurations first (so nothing calls a dead webhook), then the rest
	kubectl delete validatingwebhookconfiguration,mutatingwebhookconfiguration policyattachment --ignore-not-found
	kubectl delete -k deploy/overlays/$(or $(OVERLAY),cert-manager) --ignore-not-found

.PHONY: clean
clean: ## Remove build output
	rm -rf bin
