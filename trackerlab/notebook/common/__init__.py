"""What every display of the notebook layer reads: the tape as entries and labels (``tape``), folded blocks
(``fold``), heat maps of array values (``heatmap``), the theme's colours (``theme``), the inline styles that
survive an untrusted notebook (``inline``), lazy (dask) values (``lazy``) and the language of the text
(``i18n``)."""
