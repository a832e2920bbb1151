package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// carriedKey is the JSON field of Input that carries a run's state to the
// next; everything else of the input is the Application.
const carriedKey = "ferryCarried"

// ownerKey is the JSON field of Input naming a new app's owner.
const ownerKey = "ferryOwner"

// parseInput reads the workflow input as `ferry app apply` reads a file:
// strictly, so that an Application started with the temporal CLI is refused
// with every unknown or unsupported field named, never run without them.
// Temporal's JSON converter would drop such fields without a word, so the
// workflow takes the raw JSON and parses it here.
func parseInput(raw json.RawMessage) (Input, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		// Not an object: app.Parse says what it found and what to write.
		a, perr := app.Parse(raw)
		if perr == nil {
			return Input{Application: *a}, nil
		}
		return Input{}, perr
	}
	var in Input
	if c, ok := fields[carriedKey]; ok {
		delete(fields, carriedKey)
		if !bytes.Equal(bytes.TrimSpace(c), []byte("null")) {
			in.Carried = &Carried{}
			if err := json.Unmarshal(c, in.Carried); err != nil {
				return Input{}, fmt.Errorf("parse the state carried over from the previous run (%s): %w", carriedKey, err)
			}
		}
	}
	if o, ok := fields[ownerKey]; ok {
		delete(fields, ownerKey)
		if !bytes.Equal(bytes.TrimSpace(o), []byte("null")) {
			in.Owner = &contract.Owner{}
			if err := json.Unmarshal(o, in.Owner); err != nil {
				return Input{}, fmt.Errorf("parse the app's owner (%s): %w", ownerKey, err)
			}
		}
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return Input{}, fmt.Errorf("parse Application: %w", err)
	}
	a, err := app.Parse(rest)
	if err != nil {
		return Input{}, err
	}
	in.Application = *a
	return in, nil
}

// parseSpec reads the spec update's Application as parseInput does.
func parseSpec(raw json.RawMessage) (app.Application, error) {
	a, err := app.Parse(raw)
	if err != nil {
		return app.Application{}, err
	}
	return *a, nil
}
