"""Webhooks: endpoint configuration, signed delivery with retries, the delivery log."""

# The job that makes one attempt of a delivery; enqueued by `cauri.events.service.emit` in
# the transaction of the event, and by the delivery's own retries.
DELIVER_JOB = "webhooks.deliver"
