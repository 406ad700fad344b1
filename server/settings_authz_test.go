package server

func authzSettingsRows() []authzRow {
	return []authzRow{
		{pattern: "GET /api/v1/auths/admin/config", want: wantAdmin},
		{pattern: "POST /api/v1/auths/admin/config", body: `{"ENABLE_SIGNUP":false}`, want: wantAdmin},
		{pattern: "GET /api/v1/configs/banners", want: wantVerified},
		{pattern: "POST /api/v1/configs/banners", body: `{"banners":[{"id":"b1","type":"info","content":"Hello"}]}`, want: wantAdmin},
		{pattern: "GET /api/v1/configs/export", want: wantAdmin},
		{pattern: "POST /api/v1/configs/import", body: `{"config":{"ui.enable_signup":false}}`, want: wantAdmin},
		{pattern: "GET /api/v1/configs/settings", want: wantAdmin},
		{pattern: "POST /api/v1/configs/settings", body: `{"WEBUI_NAME":"Renamed"}`, want: wantAdmin},
	}
}
