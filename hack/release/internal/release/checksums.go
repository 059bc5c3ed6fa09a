package release

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ChecksumsFile is the name of the checksums file in dist/.
const ChecksumsFile = "SHA256SUMS"

// WriteChecksums writes dir/SHA256SUMS over every other regular file in dir, one
// "HEX  NAME" line each in name order: the format `sha256sum -c SHA256SUMS` checks.
func WriteChecksums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != ChecksumsFile {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return os.WriteFile(filepath.Join(dir, ChecksumsFile), []byte(b.String()), 0o644)
}

// VerifyChecksums checks dir/SHA256SUMS as `sha256sum -c` does, and also that it names
// every other regular file in dir: a file it leaves out is not vouched for.
func VerifyChecksums(dir string) error {
	f, err := os.Open(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	listed := map[string]bool{}
	var problems []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || strings.ContainsAny(name, "/\\") {
			problems = append(problems, fmt.Sprintf("malformed line %q", sc.Text()))
			continue
		}
		listed[name] = true
		got, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			problems = append(problems, err.Error())
		} else if got != sum {
			problems = append(problems, fmt.Sprintf("%s: sha256 %s, SHA256SUMS says %s", name, got, sum))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != ChecksumsFile && !listed[e.Name()] {
			problems = append(problems, fmt.Sprintf("%s is not in %s", e.Name(), ChecksumsFile))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", ChecksumsFile, strings.Join(problems, "; "))
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
