"""What fastscale writes into or runs beside a user's project: ``init``'s scaffold, the local emulator and the
stack snapshot a project's own tests compare against."""
