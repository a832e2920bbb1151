package activities

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// classify marks the errors that another attempt cannot fix as
// non-retryable, so the workflow reports them at once; everything else
// (network, API server, Git server) is retried with backoff.
func classify(err error) error {
	var ae *temporal.ApplicationError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &ae) && ae.NonRetryable():
		// Ours, from deep inside (who a write may go as): keep its type,
		// with the message that names the object, without the SDK's
		// "(type: …, retryable: …)" that its Error() adds in the middle.
		return temporal.NewNonRetryableApplicationError(strings.Replace(err.Error(), ae.Error(), ae.Message(), 1), ae.Type(), nil)
	case netpolicy.IsDenied(err):
		// The project's owner or the operator decides; before unreachable,
		// as a refused dial is a *net.OpError.
		return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrInvalidSource, nil)
	case render.IsUserError(err), manifests.IsFailed(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrInvalidManifests, nil)
	case gitsource.IsNotFound(err), gitsource.IsUnsupportedScheme(err), gitsource.IsCredentialRefused(err), gitsource.IsLimit(err),
		chartsource.IsNotFound(err), chartsource.IsLimit(err), manifests.IsLocalTree(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrInvalidSource, nil)
	case kube.IsRefused(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrSyncFailed, nil)
	case unreachable(err):
		return temporal.NewApplicationError("Unreachable: "+err.Error(), contract.ErrUnreachable)
	}
	// The message only: wrapped causes may carry details we do not want in
	// a history, and the message already names the object.
	return temporal.NewApplicationError(err.Error(), "")
}

// unreachable reports whether the error is a failure to reach a server
// (refused, reset, timed out, no route) rather than an answer from it, or
// to trust it: a server whose certificate the region's CA does not verify
// gives no answer Ferry may take, as Argo CD shows such a cluster
// unreachable with the TLS reason.
func unreachable(err error) bool {
	var (
		netErr    net.Error
		opErr     *net.OpError
		authority x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		hostname  x509.HostnameError
		verify    *tls.CertificateVerificationError
	)
	return errors.As(err, &opErr) || (errors.As(err, &netErr) && netErr.Timeout()) ||
		errors.As(err, &authority) || errors.As(err, &invalid) || errors.As(err, &hostname) || errors.As(err, &verify)
}
