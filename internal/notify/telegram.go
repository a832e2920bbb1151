package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

const telegramAPIURL = "https://api.telegram.org"

// TelegramOptions are service.telegram's: the bot's token. apiURL, Ferry's
// own key, is the Bot API's base URL.
type TelegramOptions struct {
	Token  string `json:"token"`
	APIURL string `json:"apiURL,omitempty"`
}

func (o *TelegramOptions) check() error {
	if o.Token == "" {
		return fmt.Errorf("token is empty; give the bot's token ($telegram-token)")
	}
	return nil
}

type telegramMessage struct {
	ChatID          any    `json:"chat_id"`
	Text            string `json:"text"`
	ParseMode       string `json:"parse_mode"`
	MessageThreadID int    `json:"message_thread_id,omitempty"`
}

// send calls the Bot API's sendMessage, in Markdown, as Argo CD does: the
// recipient is a public channel's username, or a chat's ID (negative),
// with a thread's after a "|".
func (o *TelegramOptions) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	msg := telegramMessage{Text: n.Message, ParseMode: "Markdown"}
	switch r := d.Recipient; {
	case r == "":
		return permanent("the subscription names no chat: give a channel's username or a chat's ID")
	case strings.HasPrefix(r, "-"):
		chat, thread, threaded := strings.Cut(r, "|")
		id, err := strconv.ParseInt(chat, 10, 64)
		if err != nil {
			return permanent("recipient %q: a chat's ID is a negative number", r)
		}
		msg.ChatID = id
		if threaded {
			if msg.MessageThreadID, err = strconv.Atoi(thread); err != nil {
				return permanent("recipient %q: the thread's ID after | is a number", r)
			}
		}
	default:
		msg.ChatID = "@" + strings.TrimPrefix(r, "@")
	}
	body, _ := json.Marshal(msg)
	base := strings.TrimRight(cmp.Or(o.APIURL, telegramAPIURL), "/")
	req, err := newRequest(http.MethodPost, base+"/bot"+o.Token+"/sendMessage", body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	answer, err := do(ctx, httpClient(false), req)
	if err != nil {
		return err
	}
	var out struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return fmt.Errorf("sendMessage: not the Bot API's answer: %v", err)
	}
	if !out.OK {
		return permanent("sendMessage: %s", out.Description)
	}
	return nil
}
