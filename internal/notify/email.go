package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// EmailOptions are service.email[.<name>]'s, as Argo CD names them: the
// SMTP server (implicit TLS on port 465, STARTTLS wherever the server
// offers it), the sender, and the credentials when the server asks for
// them.
type EmailOptions struct {
	Host               string `json:"host"`
	Port               int    `json:"port"`
	Username           string `json:"username,omitempty"`
	Password           string `json:"password,omitempty"`
	From               string `json:"from"`
	HTML               bool   `json:"html,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
}

// EmailTemplate is a template's email part: the subject, and a body that
// replaces the message.
type EmailTemplate struct {
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
}

func (o *EmailOptions) check() error {
	var missing []string
	if o.Host == "" {
		missing = append(missing, "host (the SMTP server's name)")
	}
	if o.Port == 0 {
		missing = append(missing, "port (587, 465 for implicit TLS, 25)")
	}
	if o.From == "" {
		missing = append(missing, "from (the sender's address, or a $secret)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("give %s", strings.Join(missing, ", "))
	}
	return nil
}

// send mails the message (or the template's email body) with its subject
// to the recipients, comma-separated, of the subscription.
func (o *EmailOptions) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	from, err := mail.ParseAddress(o.From)
	if err != nil {
		return permanent("from %q is not an email address: %v", o.From, err)
	}
	var to []string
	for r := range strings.SplitSeq(d.Recipient, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		a, err := mail.ParseAddress(r)
		if err != nil {
			return permanent("recipient %q is not an email address: %v", r, err)
		}
		to = append(to, a.Address)
	}
	if len(to) == 0 {
		return permanent("the subscription names no address: subscribe.<trigger>.<service>: someone@example.com")
	}
	subject, body := "", n.Message
	if e := n.Email; e != nil {
		subject = e.Subject
		if e.Body != "" {
			body = e.Body
		}
	}
	msg := composeEmail(from, to, subject, body, o.HTML, d.ID, time.Now())
	return o.deliver(ctx, from.Address, to, msg)
}

// deliver talks SMTP (net/smtp) to the server: a 5xx answer is for good,
// anything else may pass on another try.
func (o *EmailOptions) deliver(ctx context.Context, from string, to []string, msg []byte) error {
	addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	tlsConfig := &tls.Config{ServerName: o.Host, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // the service's insecure_skip_verify asks for it
	var conn net.Conn
	var err error
	if o.Port == 465 {
		conn, err = (&tls.Dialer{Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("SMTP %s: %v", addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := smtp.NewClient(conn, o.Host)
	if err != nil {
		return smtpError(addr, "greeting", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && o.Port != 465 {
		if err := c.StartTLS(tlsConfig); err != nil {
			return smtpError(addr, "STARTTLS", err)
		}
	}
	if o.Username != "" {
		if ok, _ := c.Extension("AUTH"); ok {
			// PlainAuth refuses to send the password unencrypted but to localhost.
			if err := c.Auth(smtp.PlainAuth("", o.Username, o.Password, o.Host)); err != nil {
				return smtpError(addr, "AUTH", err)
			}
		}
	}
	if err := c.Mail(from); err != nil {
		return smtpError(addr, "MAIL FROM", err)
	}
	for _, r := range to {
		if err := c.Rcpt(r); err != nil {
			return smtpError(addr, "RCPT TO "+r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return smtpError(addr, "DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		return smtpError(addr, "DATA", err)
	}
	if err := w.Close(); err != nil {
		return smtpError(addr, "DATA", err)
	}
	_ = c.Quit() // the server has taken the message: a failed goodbye must not send it again
	return nil
}

// smtpError says which step failed; the server refusing for good (5xx) is
// permanent.
func smtpError(addr, step string, err error) error {
	var tp *textproto.Error
	if errors.As(err, &tp) && tp.Code >= 500 {
		return permanent("SMTP %s: %s: %d %s", addr, step, tp.Code, tp.Msg)
	}
	if step == "AUTH" && !errors.As(err, &tp) {
		return permanent("SMTP %s: %s: %v", addr, step, err) // e.g. unencrypted connection
	}
	return fmt.Errorf("SMTP %s: %s: %v", addr, step, err)
}

// composeEmail is the message: UTF-8, quoted-printable, with a Message-ID
// made of the notification's ID, so that a mail client can tell a retry's
// copy from a new notification, and the ID in X-Ferry-Notification.
func composeEmail(from *mail.Address, to []string, subject, body string, html bool, id string, now time.Time) []byte {
	var b bytes.Buffer
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	sum := sha256.Sum256([]byte(id))
	host := "ferry.invalid"
	if _, h, ok := strings.Cut(from.Address, "@"); ok {
		host = h
	}
	header("From", from.String())
	header("To", strings.Join(to, ", "))
	header("Subject", mime.QEncoding.Encode("utf-8", oneLine(subject)))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(sum[:16])+"@"+host+">")
	header(NotificationHeader, oneLine(id))
	header("MIME-Version", "1.0")
	typ := "text/plain"
	if html {
		typ = "text/html"
	}
	header("Content-Type", typ+"; charset=UTF-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}

// oneLine keeps a header value on its line: a template's subject often
// ends with a newline.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
