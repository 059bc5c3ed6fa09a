package clusterstate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	kjson "sigs.k8s.io/json"
)

// eachListItem decodes a List response (JSON) from r one item at a time, handing each to
// fn as unstructured content (integers as int64, as client-go's unstructured decoding
// gives them), and returns the list's resourceVersion. Only one item's bytes and objects
// are held at once, whatever the list's size.
func eachListItem(r io.Reader, fn func(map[string]any) error) (resourceVersion string, err error) {
	dec := kjson.NewDecoderCaseSensitivePreserveInts(bufio.NewReaderSize(r, 256<<10))
	if err := expectDelim(dec, '{'); err != nil {
		return "", err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case "metadata":
			var meta struct {
				ResourceVersion string `json:"resourceVersion"`
			}
			if err := dec.Decode(&meta); err != nil {
				return "", err
			}
			resourceVersion = meta.ResourceVersion
		case "items":
			if err := decodeItems(dec, fn); err != nil {
				return "", err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
	return resourceVersion, expectDelim(dec, '}')
}

// decodeItems decodes the array the decoder is at, item by item.
func decodeItems(dec kjson.Decoder, fn func(map[string]any) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil { // "items": null
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("list items: want an array, got %v", tok)
	}
	for dec.More() {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			return err
		}
		if err := fn(obj); err != nil {
			return err
		}
	}
	return expectDelim(dec, ']')
}

func expectDelim(dec kjson.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("list response: want %q, got %v", want, tok)
	}
	return nil
}
