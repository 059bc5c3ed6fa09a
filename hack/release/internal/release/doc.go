// Package release makes and checks what `make release VERSION=vX.Y.Z` writes to dist/
// (docs/releasing.md):
//
//   - webhook-VERSION-image.tar: the container image for linux/amd64 and linux/arm64 as one
//     OCI image index, in an OCI image layout tarball (oci-layout, index.json, blobs/) that
//     also carries a docker-archive manifest.json; Image, Index, WriteArchive, ReadArchive.
//   - policyattachment-webhook-X.Y.Z.tgz and index.yaml: the Helm chart packaged as
//     `helm package --version X.Y.Z --app-version VERSION` does, and the chart repository
//     index `helm repo index` writes; PackageChart, IndexCharts.
//   - webhook-VERSION.cdx.json: a CycloneDX 1.6 SBOM of the Go modules linked into the
//     binaries, read from their embedded build information, with the module graph's edges;
//     SBOM.
//   - RELEASE-NOTES.md: VERSION's section of CHANGELOG.md; ChangelogSection.
//   - SHA256SUMS: `sha256sum -c` reads it; WriteChecksums, VerifyChecksums.
//
// Verify checks a dist/ folder the way CI does after building one. The package runs no
// build and no network call of its own; hack/release cross-compiles the binaries and calls
// it.
package release
