"""Pure plotly figure builders: arrays and token lists in, figures out. No other core layer is
imported here, so a figure can only show what it is given."""
