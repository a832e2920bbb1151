package appobjects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Operation is the operation field of an Application, as Argo CD writes it
// (kubectl patch app web --type merge -p '{"operation":{"sync":{}}}').
type Operation struct {
	Sync *SyncOperation `json:"sync"`
	// InitiatedBy is who set the operation, as its writer says (Argo CD's
	// server writes the user it authenticated); the operation keeps it.
	InitiatedBy *app.InitiatedBy `json:"initiatedBy,omitempty"`
	Info        []app.Info       `json:"info,omitempty"`
	Retry       *app.RetryPolicy `json:"retry,omitempty"`
}

// SyncOperation is operation.sync.
type SyncOperation struct {
	Revision     string             `json:"revision,omitempty"`
	Revisions    []string           `json:"revisions,omitempty"`
	Prune        bool               `json:"prune,omitempty"`
	DryRun       bool               `json:"dryRun,omitempty"`
	SyncStrategy *SyncStrategy      `json:"syncStrategy,omitempty"`
	Resources    []app.SyncResource `json:"resources,omitempty"`
	SyncOptions  []string           `json:"syncOptions,omitempty"`
}

// SyncStrategy is operation.sync.syncStrategy: apply or hook, either
// with force.
type SyncStrategy struct {
	Apply *struct {
		Force bool `json:"force,omitempty"`
	} `json:"apply,omitempty"`
	Hook *struct {
		Force bool `json:"force,omitempty"`
	} `json:"hook,omitempty"`
}

// Force: the strategy asks for Force=true.
func (s *SyncStrategy) Force() bool {
	return s != nil && (s.Apply != nil && s.Apply.Force || s.Hook != nil && s.Hook.Force)
}

// ApplyOutOfSyncOnly: the sync options ask to apply only what is OutOfSync.
func (s *SyncOperation) ApplyOutOfSyncOnly() bool {
	for _, o := range s.SyncOptions {
		if strings.EqualFold(o, "ApplyOutOfSyncOnly=true") {
			return true
		}
	}
	return false
}

// ReadOperation reads an object's operation field: nil when it has none.
// A field Ferry does not take is an error that names it, so that nothing
// the user asked for is silently dropped.
func ReadOperation(raw any) (*Operation, error) {
	if raw == nil {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	if m, ok := raw.(map[string]any); ok {
		if sync, ok := m["sync"].(map[string]any); ok && sync["manifests"] != nil {
			return nil, errors.New("operation.sync.manifests (argocd app sync --local) is not taken from an Application object: " +
				"the manifests would sit in clear in the object, and in etcd; run ferry app sync NAME --local DIR, which hands them to the workers encrypted")
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var op Operation
	if err := dec.Decode(&op); err != nil {
		return nil, fmt.Errorf("operation: %w (Ferry takes operation.sync with revision, prune, dryRun, syncStrategy, resources and syncOptions, and operation.initiatedBy, info and retry)", err)
	}
	if op.Sync == nil {
		return nil, fmt.Errorf("operation: only a sync operation is taken: set operation.sync")
	}
	switch r := op.Sync.Revisions; {
	case len(r) > 1:
		return nil, fmt.Errorf("operation.sync.revisions: Ferry syncs one revision for all sources: give operation.sync.revision, or sync each source's targetRevision")
	case len(r) == 1 && op.Sync.Revision == "":
		op.Sync.Revision = r[0]
	}
	return &op, nil
}
