package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// docEdit changes an app's Application, given and returned as JSON (the
// file ferry app apply would take: apiVersion, kind, metadata and spec).
type docEdit func(doc []byte) ([]byte, error)

// specEdit is a docEdit over the decoded Application.
func specEdit(edit func(a *app.Application) error) docEdit {
	return func(doc []byte) ([]byte, error) {
		var a app.Application
		if err := json.Unmarshal(doc, &a); err != nil {
			return nil, err
		}
		if err := edit(&a); err != nil {
			return nil, err
		}
		return json.Marshal(&a)
	}
}

// updateApp is the one way set, unset, patch, edit, add-source and
// remove-source change an app: it reads the app's Application, edits it,
// reads the result as ferry app apply reads a file (every problem at once,
// and nothing written while there is one), and writes it whole, as apply
// does: through ferry-server once logged in (PUT, as argocd's update);
// else as the Application object when the app is one's; else through the
// app's spec update, which its worker validates again.
func updateApp(cmd *cobra.Command, tf *temporalFlags, cf *controlFlags, name string, edit docEdit) error {
	ctx := cmd.Context()
	if a, err := door(); err != nil || a != nil {
		if err != nil {
			return err
		}
		v, err := doorView(ctx, a, name, nil)
		if err != nil {
			return err
		}
		// ferry-server validates with the regions it knows.
		_, doc, err := editedApp(v, app.ValidateOptions{}, edit)
		if err != nil {
			return err
		}
		path, q := appPath(name, "")
		if err := a.do(ctx, "PUT", path, q, json.RawMessage(doc), nil); err != nil {
			return fmt.Errorf("app %q: update: %w", name, err)
		}
		return reportUpdated(cmd, name)
	}
	opts, err := validateOptions()
	if err != nil {
		return err
	}
	c, err := tf.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := queryApp(ctx, c, name)
	if err != nil {
		return err
	}
	edited, doc, err := editedApp(v, opts, edit)
	if err != nil {
		return err
	}
	if err := writeApp(ctx, c, cf, v, edited, doc); err != nil {
		return appError(name, "update", err)
	}
	return reportUpdated(cmd, name)
}

func reportUpdated(cmd *cobra.Command, name string) error {
	fmt.Fprintf(cmd.OutOrStdout(), "application %q updated\n", name)
	return nil
}

// writeApp writes the edited Application of the app v: as its object,
// when an Application object is the app, else through its spec update.
func writeApp(ctx context.Context, c client.Client, cf *controlFlags, v *contract.View, edited *app.Application, doc []byte) error {
	if v.Owner != nil && v.Owner.Object != "" {
		objects, err := cf.objects()
		if err != nil {
			return err
		}
		if objects == nil {
			return fmt.Errorf("the app is Application object %s's: give its control cluster's namespace (--control-namespace, FERRY_CONTROL_NAMESPACE) so that the object is written, or change the object with kubectl", v.Owner.Object)
		}
		return objects.update(ctx, c, v.Metadata.Name, v.Owner.Object, edited, doc)
	}
	_, err := ferryclient.Apply(ctx, c, edited, contract.SpecRequest{})
	return err
}

// appDocument is the app's Application as a file holds it: its bare name,
// its namespace, its labels, annotations, finalizers and spec.
func appDocument(v *contract.View) ([]byte, error) {
	a := v.Application
	if ns, bare := app.SplitName(a.Metadata.Name); ns != "" {
		a.Metadata.Name, a.Metadata.Namespace = bare, ns
	}
	a.APIVersion, a.Kind = app.APIVersion, app.Kind
	return json.Marshal(&a)
}

// editedApp applies edit to the app's document and reads the result as
// apply reads a file. The edit may not rename the app nor move it.
func editedApp(v *contract.View, opts app.ValidateOptions, edit docEdit) (*app.Application, []byte, error) {
	doc, err := appDocument(v)
	if err != nil {
		return nil, nil, err
	}
	out, err := edit(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("app %q: %w", v.Metadata.Name, err)
	}
	edited, err := app.Read(out, opts)
	if err != nil {
		var ve *app.ValidationError
		if errors.As(err, &ve) {
			return nil, nil, fmt.Errorf("nothing was changed: %w", err)
		}
		return nil, nil, fmt.Errorf("app %q: nothing was changed: %w", v.Metadata.Name, err)
	}
	ns, bare := app.SplitName(v.Metadata.Name)
	if edited.Metadata.Name != bare {
		return nil, nil, fmt.Errorf("app %q: nothing was changed: metadata.name is %q after the edit: an edit changes the app it names; to rename an app, apply it under the new name and delete this one", v.Metadata.Name, edited.Metadata.Name)
	}
	if ns != "" && edited.Metadata.Namespace != ns {
		return nil, nil, fmt.Errorf("app %q: nothing was changed: metadata.namespace is %q after the edit: an app stays in its namespace", v.Metadata.Name, edited.Metadata.Namespace)
	}
	edited.Qualify(ns)
	return edited, out, nil
}
