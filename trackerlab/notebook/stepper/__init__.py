"""The back-propagation stepper: the widget and its controls (``widget``), the frames of the engine's walk
(``frames``, with the chain rule of each step: ``chain``, and the values it shows: ``values``), a frame as
HTML (``frame_html``) and the frames drawn up front for a page without a kernel (``static``)."""

from .widget import BackpropStepper

__all__ = ["BackpropStepper"]
