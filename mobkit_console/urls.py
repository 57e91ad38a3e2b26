from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from mobkit_console.accounts.oidc_browser import ConsoleOIDCAuthenticationRequestView, ConsoleOIDCCallbackView
from mobkit_console.experience import experience
from mobkit_console.rpc.views import rpc_endpoint
from mobkit_console.shell import console_shell

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="console-shell")),
    path("console/", console_shell, name="console-shell"),
    path(
        "console/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    # Django's LogoutView signs out on POST only, so a link or prefetch cannot sign anyone out.
    path("console/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("console/oidc/authenticate/", ConsoleOIDCAuthenticationRequestView.as_view(), name="oidc_authentication_init"),
    path("console/oidc/callback/", ConsoleOIDCCallbackView.as_view(), name="oidc_authentication_callback"),
    path("console/rpc", rpc_endpoint, name="console-rpc"),
    path("console/experience", experience, name="console-experience"),
    path("", include("mobkit_console.audit.urls")),
    path("", include("mobkit_console.explainer.urls")),
    path("", include("mobkit_console.alerts.urls")),
    path("console/", include("memory_panel.urls")),
    path("", include("mobkit_console.timeline.urls")),
    path("", include("mobkit_console.saved_views.urls")),
]
