"""The Werewolf arena: opponent models paired against each other, reports and figures,
the trust-graph command."""
