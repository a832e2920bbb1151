package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/handover"
	"github.com/ferry-gitops/ferry/internal/manifests"
)

// HandOver gives a region worker that is no control worker the manifests
// of a target: from its own memory, else handed over by the control side
// (ferryclient.HandOver), sealed to this process's key. Such a worker never
// renders, so it needs no Git credentials, plugins, render sandbox or the
// control workers' FERRY_CACHE_KEY.
type HandOver struct {
	Client client.Client
	Keys   *handover.Keys
	// Cache keeps the sets handed over, by digest, in the worker's memory.
	Cache manifests.Cache

	flights singleflight.Group
}

func (h *HandOver) load(ctx context.Context, r *Region, t contract.Target) ([]*unstructured.Unstructured, error) {
	key := "handover/" + t.Digest
	if payload, ok := h.Cache.Get(ctx, key); ok {
		if objs, err := manifests.Decode(payload); err == nil {
			return objs, nil
		}
	}
	// One ask per set however many activities miss it at once.
	v, err, _ := h.flights.Do(key, func() (any, error) { return h.ask(ctx, r, t) })
	if err != nil {
		return nil, err
	}
	h.Cache.Put(ctx, key, v.([]byte))
	return manifests.Decode(v.([]byte))
}

// ask has the control side hand the set over, and checks it is the one
// the app's workflow rendered.
func (h *HandOver) ask(ctx context.Context, r *Region, t contract.Target) ([]byte, error) {
	in := contract.HandOverInput{Target: t, Region: r.Name}
	if r.Projects != nil {
		a, err := r.appProject(ctx, t.App)
		if err != nil {
			return nil, err
		}
		in.Project = a.project.Metadata.Name
	}
	payload, err := ferryclient.HandOverOpen(ctx, h.Client, h.Keys, in)
	if errors.Is(err, ferryclient.ErrHandedOverDigest) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%v: nothing of them was applied in region %s", err, r.Name),
			contract.ErrInvalidManifests, nil)
	}
	if err != nil {
		return nil, classify(err)
	}
	return payload, nil
}
