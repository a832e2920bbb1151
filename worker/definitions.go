package main

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
	"github.com/ferry-gitops/ferry/internal/appset"
)

// objectDefinitions is appobjects.Definitions over the project and
// ApplicationSet workflows, as ferry project apply and ferry appset apply
// use them.
type objectDefinitions struct{ c client.Client }

func (d *objectDefinitions) Apply(ctx context.Context, kind string, doc []byte) error {
	switch kind {
	case "AppProject":
		p, err := app.ParseProject(doc)
		if err == nil {
			err = app.ValidateProject(p)
		}
		if err != nil {
			return &appobjects.Refused{Err: err}
		}
		_, err = ferryclient.ApplyProject(ctx, d.c, p)
		return refusal(err)
	case "ApplicationSet":
		s, err := appset.Read(doc)
		if err != nil {
			return &appobjects.Refused{Err: err}
		}
		_, err = ferryclient.ApplyAppSet(ctx, d.c, s)
		return refusal(err)
	}
	return fmt.Errorf("no definitions of kind %s", kind)
}

func (d *objectDefinitions) Delete(ctx context.Context, kind, name string) error {
	var err error
	switch kind {
	case "AppProject":
		if name == app.DefaultProject {
			// Deleting the object restores the built-in default project;
			// once that is back, there is nothing more to delete.
			if v, err := ferryclient.GetProject(ctx, d.c, name); err == nil && v.IsBuiltIn() {
				return nil
			}
		}
		err = ferryclient.DeleteProject(ctx, d.c, name)
		var nf *contract.ProjectNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
	case "ApplicationSet":
		err = ferryclient.DeleteAppSet(ctx, d.c, name)
		var nf *contract.AppSetNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
	default:
		return fmt.Errorf("no definitions of kind %s", kind)
	}
	return refusal(err)
}
