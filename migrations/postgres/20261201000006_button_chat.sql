-- A Telegram button acts only from the chat its reminder was sent to.
-- Buttons made before this column existed have none and act from any chat
-- linked to their person.
ALTER TABLE telegram_buttons ADD COLUMN chat_id TEXT;
